"""`optimize`: GEPA prompt optimization (registered on the main app)."""
