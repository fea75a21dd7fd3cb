"""The pipeline's stages, one module each, in the order `default_stages()` runs them."""
