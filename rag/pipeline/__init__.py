"""The query pipeline: sanitize → cache → retrieve → rank → context → template → prompt → model →
post-process → verify → assemble (see HOUSE.md, "The pipeline")."""
