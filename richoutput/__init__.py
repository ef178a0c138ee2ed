"""The rich-output app's Django glue (the pure core is richoutput/canvas): API router, services, selectors, views."""
