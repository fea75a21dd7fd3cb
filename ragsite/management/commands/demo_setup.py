"""manage.py demo_setup — a demo tenant, an admin user and an API key for `make run`.

Idempotent. The generated password and API key are kept in var/demo-credentials.json (git-ignored)
so every `make run` prints the same working credentials.
"""

import json
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from tenants import selectors, services
from tenants.models import Role

DEMO_TENANT = ("demo-law-firm", "Demo Law Firm LLP")
ADMIN_USERNAME = "admin"


class Command(BaseCommand):
    help = "Create (or refresh) the demo tenant, admin user and API key, and print them."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="where the app is served")

    def handle(self, *args, url, **options):
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
                tenant=tenant, name="demo", role=Role.ADMIN, created_by=user
            )

        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(saved))
        path.chmod(0o600)
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"Lexrag is at {url}/",
                    f"  admin console  {url}/admin/   user: {ADMIN_USERNAME}   password: {saved['password']}",
                    f"  health         {url}/api/v1/health",
                    f"  API key        {saved['api_key']}   (tenant: {tenant.slug})",
                    f"  try            curl -H 'Authorization: Api-Key {saved['api_key']}' "
                    f"{url}/api/v1/tenants/current",
                    "",
                ]
            )
        )
