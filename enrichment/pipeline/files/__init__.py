"""File extraction: attachments that are documents become text blocks."""
