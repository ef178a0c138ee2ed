"""The OpenClaw-shaped config: one reader toolkit, one module per section, the parsed model."""
