"""Formats for English (the site's only language): ISO-style dates, 24-hour UTC times.

Django reads these for every datetime it renders without an explicit format: the admin's
change lists, read-only fields and object history. ``TIME_ZONE`` is fixed to UTC, so
"UTC" is what the digits are.
"""

DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i:s"
DATETIME_FORMAT = r"Y-m-d H:i:s \U\T\C"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = r"Y-m-d H:i \U\T\C"
YEAR_MONTH_FORMAT = "Y-m"
MONTH_DAY_FORMAT = "m-d"
