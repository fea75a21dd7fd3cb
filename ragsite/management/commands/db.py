"""manage.py db status|start|stop — the embedded PostgreSQL server (when DATABASE_URL is unset)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ragsite.embedded_pg import server


class Command(BaseCommand):
    help = "Show, start or stop the embedded PostgreSQL + pgvector server."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "start", "stop"])

    def handle(self, *args, action, **options):
        if settings.DATABASE_URL:
            raise CommandError(
                "DATABASE_URL is set, so the embedded server is not used; manage that server directly."
            )
        data_dir = settings.EMBEDDED_PG_DATA_DIR
        try:
            if action == "start":
                state = server.ensure_running(data_dir)
                self.stdout.write(
                    f"running (pid {state.pid}), data {state.data_dir}, socket {state.socket_dir}"
                )
            elif action == "stop":
                stopped = server.stop(data_dir)
                self.stdout.write("stopped" if stopped else "not running")
            else:
                state = server.status(data_dir)
                word = f"running (pid {state.pid})" if state.running else "stopped"
                self.stdout.write(f"{word}, data {state.data_dir}, socket {state.socket_dir}")
        except server.EmbeddedPostgresError as exc:
            raise CommandError(str(exc)) from exc
