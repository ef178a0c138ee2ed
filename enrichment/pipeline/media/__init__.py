"""Media understanding: attachments, capabilities, CLI and provider entries, envelopes, summaries."""
