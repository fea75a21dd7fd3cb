"""manage.py demo_setup — a demo tenant, an admin user, an API key and a demo matter for `make run`.

Idempotent. The generated password and API key are kept in var/demo-credentials.json (git-ignored)
so every `make run` prints the same working credentials. The demo matter holds five public contracts
(demo/documents/, see demo/ATTRIBUTION.md), ingested in this process on the first run only;
`--no-documents` skips them.
"""

import json
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from ragsite import demo
from tenants import selectors, services
from tenants.models import Role

DEMO_TENANT = ("demo-law-firm", "Demo Law Firm LLP")
ADMIN_USERNAME = "admin"


class Command(BaseCommand):
    help = (
        "Create (or refresh) the demo tenant, admin user and API key, load the demo documents, "
        "and print the credentials."
    )

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="where the app is served")
        parser.add_argument(
            "--no-documents",
            action="store_true",
            help=f"do not load the demo documents into the case {demo.DEMO_CASE!r}",
        )

    def handle(self, *args, url, no_documents, **options):
        path = settings.VAR_DIR / "demo-credentials.json"
        saved = json.loads(path.read_text()) if path.exists() else {}

        User = get_user_model()
        user = User.objects.filter(username=ADMIN_USERNAME).first()
        if user is None or not user.check_password(saved.get("password", "")):
            saved["password"] = secrets.token_urlsafe(12)
            user = user or User(username=ADMIN_USERNAME, email="admin@demo.invalid")
            user.is_staff = user.is_superuser = True
            user.set_password(saved["password"])
            user.save()

        tenant = services.demo_tenant_setup(slug=DEMO_TENANT[0], name=DEMO_TENANT[1], user=user)
        if services.api_key_authenticate(raw_key=saved.get("api_key", "")) is None:
            for stale in selectors.api_key_list(tenant=tenant).filter(name="demo", revoked_at=None):
                services.api_key_revoke(tenant=tenant, key_id=stale.pk)
            _, saved["api_key"] = services.api_key_create(
                tenant=tenant, name="demo", role=Role.ADMIN, created_by=user, created_via="demo_setup"
            )

        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(saved))
        path.chmod(0o600)
        if not no_documents:
            self._load_documents(tenant, user)
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"Lexrag is at {url}/",
                    f"  staff UI       {url}/   (log in with the admin user below)",
                    f"  admin console  {url}/admin/   user: {ADMIN_USERNAME}   password: {saved['password']}",
                    f"  firm console   {url}/manage/   (the same user, as the owner of {tenant.name})",
                    f"  health         {url}/api/v1/health",
                    f"  API key        {saved['api_key']}   (tenant: {tenant.slug})",
                    f"  try            curl -H 'Authorization: Api-Key {saved['api_key']}' "
                    f"{url}/api/v1/tenants/current",
                    "",
                ]
            )
        )

    def _load_documents(self, tenant, user):
        self.stdout.write(f"Loading the demo documents into {demo.DEMO_CASE!r} of {tenant.slug}:")
        summary = demo.demo_documents_load(tenant=tenant, user=user, report=self.stdout.write)
        self.stdout.write(f"Demo documents: {summary}")
