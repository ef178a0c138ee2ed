"""Link understanding: detection (with its C fast path), the link stage, envelope and decision records."""
