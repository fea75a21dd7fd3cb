"""Pages of an admin site that belong to no model admin (e.g. the dry-run simulation), reachable from
the site's index and sidebar like a model's change list.

`SitePagesMixin` gives an `AdminSite` `register_page`: the page gets a URL of the site, behind
`admin_view` (so the site's own permission check applies: on the tenant site, admins and owners of
the active tenant only), and an entry among the models of one app in the site's app list, which
Django shows on the index, the app's index and the sidebar.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.urls import path, reverse


@dataclass(frozen=True)
class Page:
    view: Callable
    route: str  # relative to the site's root, e.g. "simulate/"
    name: str  # the URL name within the site's namespace
    label: str  # the menu entry's text
    app_label: str  # listed among this app's models

    def menu_entry(self, site_name: str) -> dict:
        """The page as a row of `AdminSite.get_app_list` (the keys Django's app_list.html reads)."""
        return {
            "model": None,
            "name": self.label,
            "object_name": self.name,
            "perms": {"view": True, "add": False, "change": False, "delete": False},
            "admin_url": reverse(f"{site_name}:{self.name}"),
            "add_url": None,
            "view_only": True,
        }


class SitePagesMixin:
    """Mixed into an `AdminSite` before it: pages registered with `register_page` get URLs and menu
    entries. Register them before the site's URLs are first read (when the URLconf loads)."""

    @property
    def pages(self) -> list[Page]:
        return self.__dict__.setdefault("_pages", [])

    def register_page(self, view, *, route: str, name: str, label: str, app_label: str) -> None:
        """Add `view` (a plain view taking the request) at `route`, listed as `label` under the
        models of `app_label` (a registered app; the page is not listed without one)."""
        self.pages.append(Page(view=view, route=route, name=name, label=label, app_label=app_label))

    def get_urls(self):
        own = [path(page.route, self.admin_view(page.view), name=page.name) for page in self.pages]
        return [*own, *super().get_urls()]

    def get_app_list(self, request, app_label=None):
        app_list = super().get_app_list(request, app_label)
        for app in app_list:
            entries = [
                page.menu_entry(self.name) for page in self.pages if page.app_label == app["app_label"]
            ]
            if entries:
                app["models"] = sorted([*app["models"], *entries], key=lambda entry: entry["name"])
        return app_list
