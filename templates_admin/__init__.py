"""Prompt templates and the admin console's template CRUD, weight tuning and simulation forms."""
