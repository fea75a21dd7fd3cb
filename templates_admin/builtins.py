"""The ids of the built-in templates. Their texts live in migration 0002_builtin_templates (a
migration must not import app code that may change); later changes to them come as new migrations or
admin edits, so the database holds the current texts."""

BUILTIN_TEMPLATE_IDS = ("legal_analysis_terse", "legal_analysis_balanced", "legal_analysis_detailed")
BUILTIN_TEMPLATE_ID_BY_STYLE = {
    "terse": "legal_analysis_terse",
    "balanced": "legal_analysis_balanced",
    "detailed": "legal_analysis_detailed",
}
DEFAULT_TEMPLATE_ID = "legal_analysis_balanced"
