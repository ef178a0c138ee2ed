"""Markdown structure shared by link detection and the canvas directive parsers."""
