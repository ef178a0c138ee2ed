"""The rich-output app's Django glue (the pure core is controlui/canvas): API router, services, selectors, views."""
