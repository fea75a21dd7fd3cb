"""Who asks: the tenant, the role (which decides the confidential text they may read) and the
user or API key the audit trail, history and conversations are kept under."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from rag.retrieval.service import Reader
from tenants.models import Role, Tenant


@dataclass(frozen=True)
class Caller:
    tenant: Tenant
    role: str
    user_id: int | None = None
    api_key_prefix: str = ""

    @classmethod
    def from_request(cls, request) -> Caller:
        """The caller of an authenticated tenant-scoped request (`request.auth` is its credential)."""
        credential = request.auth
        api_key = credential.api_key
        return cls(
            tenant=credential.tenant,
            role=credential.role,
            user_id=None if api_key is not None else request.user.pk,
            api_key_prefix=api_key.prefix if api_key is not None else "",
        )

    @cached_property
    def hidden_cases(self) -> frozenset[int]:
        """The cases walled off from this caller (rag.selectors.walled_case_ids): to them they do
        not exist, on every page and endpoint."""
        from rag import selectors  # rag.selectors imports the retrieval layer this module sits on

        return selectors.walled_case_ids(tenant=self.tenant, user_id=self.user_id)

    @property
    def reader(self) -> Reader:
        return Reader(user_id=self.user_id, role=self.role)

    @property
    def ident(self) -> str:
        """A stable name of the caller within its tenant."""
        return f"key:{self.api_key_prefix}" if self.api_key_prefix else f"user:{self.user_id}"

    @property
    def is_admin(self) -> bool:
        return Role.at_least(self.role, Role.ADMIN)

    def owns(self, row) -> bool:
        """Whether `row` (a job or audit row with user_id/api_key_prefix) was asked by this caller."""
        return row.user_id == self.user_id and row.api_key_prefix == self.api_key_prefix
