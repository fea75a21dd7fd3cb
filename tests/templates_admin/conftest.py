import pytest

from templates_admin import services


@pytest.fixture
def template_data():
    """Valid data for `services.template_create`."""
    return {
        "template_id": "custom_terse",
        "name": "Custom Terse",
        "response_style": "terse",
        "system_prompt": "You are a careful legal research assistant.",
        "user_prompt": "Context: {context}\n\nQuestion: {question}\n\n{instructions}",
        "instructions_block": "One sentence.",
        "citation_style": "inline_numbers",
    }


@pytest.fixture
def make_template(template_data):
    """make_template(tenant, **changes) -> the tenant's new template."""

    def make(tenant, **changes):
        return services.template_create(tenant=tenant, data={**template_data, **changes})

    return make
