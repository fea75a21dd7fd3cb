"""An owner and an admin of the first firm (`tenant`), for the membership, invitation and key tests."""

import pytest

from tenants.models import Role
from tests.factories import MembershipFactory


@pytest.fixture
def owner(tenant):
    return MembershipFactory(tenant=tenant, role=Role.OWNER).user


@pytest.fixture
def admin_user(tenant):
    return MembershipFactory(tenant=tenant, role=Role.ADMIN).user
