"""Settings split as base / local / production / test; everything comes from the environment."""
