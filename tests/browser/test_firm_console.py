"""The firm admin console (/manage/) in a real browser, as a firm's knowledge manager uses it at a
laptop's 1366 px: the audit log is readable and exports CSV, API keys are created (shown once) and
revoked, a built-in template is customised and shows in a simulation, ranking weights are tuned
with a preview, a member is invited (pending until accepted); the second firm's admin sees none of it."""

from __future__ import annotations

import csv
import datetime
import io

import pytest
from django.core import mail

from rag import services as rag_services
from rag.ingest import service as ingest
from rag.models import AuditLog, RankingWeights
from templates_admin.models import PromptTemplate
from templates_admin.services import template_create, template_update
from tenants.models import ApiKey, Invitation, Membership, Role
from tests.factories import MembershipFactory

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
LONG_QUESTION = (
    "Under the distribution agreement between Tripath Technology and Detto, which party bears the "
    "cost of shipping defective units back, and does that obligation survive termination?"
)


def _log_in(page, base_url: str, user) -> None:
    page.context.clear_cookies()
    page.goto(f"{base_url}/manage/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base_url}/manage/")


@pytest.fixture
def laptop(page):
    page.set_viewport_size({"width": 1366, "height": 768})
    return page


@pytest.fixture
def firm_admins(tenant, other_tenant):
    """An owner of each firm, and a few questions in the first firm's log."""
    for n in range(3):
        AuditLog.objects.create(
            tenant=tenant,
            request_id=f"req-acme-{n}",
            query=f"{LONG_QUESTION} (variant {n})",
            status="answered",
            confidence=0.7,
            latency_ms=40.0,
        )
    return (
        MembershipFactory(tenant=tenant, role=Role.OWNER).user,
        MembershipFactory(tenant=other_tenant, role=Role.OWNER).user,
    )


def test_audit_log_is_readable_at_1366_and_exports_csv(laptop, live_server, tenant, firm_admins, screenshot):
    page, (acme_owner, globex_owner) = laptop, firm_admins
    _log_in(page, live_server.url, acme_owner)
    assert tenant.name in page.locator("#site-name").inner_text()

    page.goto(f"{live_server.url}/manage/rag/auditlog/")
    cell = page.locator("td.field-question").first
    assert "Tripath Technology and Detto" in cell.inner_text()
    assert cell.bounding_box()["width"] >= 300  # was ~90 px on the operator site
    # Every column is in view: neither the page nor the list scrolls sideways.
    for element in ("document.documentElement", "document.querySelector('.results')"):
        assert page.evaluate(f"{element}.scrollWidth <= {element}.clientWidth"), element
    screenshot("console-audit-log")

    with page.expect_download() as download:
        page.click("text=Export CSV")
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
    assert sorted(row["request_id"] for row in rows) == ["req-acme-0", "req-acme-1", "req-acme-2"]

    _log_in(page, live_server.url, globex_owner)
    page.goto(f"{live_server.url}/manage/rag/auditlog/")
    assert "Tripath" not in page.content()
    assert "0 audit logs" in page.locator("#changelist").inner_text()


def test_key_created_once_revoked_and_invisible_to_the_other_firm(laptop, live_server, tenant, firm_admins):
    page, (acme_owner, globex_owner) = laptop, firm_admins
    _log_in(page, live_server.url, acme_owner)
    page.goto(f"{live_server.url}/manage/tenants/apikey/add/")
    page.fill("#id_name", "Document management sync")
    page.select_option("#id_role", "member")
    page.click("input[name=_save]")
    shown = page.locator(".messagelist .warning").inner_text()
    raw_key = shown.rsplit(" ", 1)[-1]
    assert raw_key.startswith("lx_")
    page.reload()
    assert raw_key not in page.content()  # shown once

    key = ApiKey.objects.get(tenant=tenant, name="Document management sync")
    page.goto(f"{live_server.url}/manage/tenants/apikey/")
    page.check(f"input[name=_selected_action][value='{key.pk}']")
    page.select_option("select[name=action]", "revoke")
    page.click("button[name=index]")
    page.wait_for_selector(".messagelist .success, .messagelist .info")
    key.refresh_from_db()
    assert key.revoked_at is not None

    _log_in(page, live_server.url, globex_owner)
    page.goto(f"{live_server.url}/manage/tenants/apikey/")
    assert "Document management sync" not in page.content()
    assert page.goto(f"{live_server.url}/manage/tenants/apikey/{key.pk}/change/").status == 404


def test_customising_a_built_in_never_edits_it(laptop, live_server, tenant, firm_admins, screenshot):
    page, (acme_owner, globex_owner) = laptop, firm_admins
    builtin = PromptTemplate.objects.get(tenant__isnull=True, template_id="legal_analysis_balanced")
    builtin_prompt = builtin.system_prompt
    _log_in(page, live_server.url, acme_owner)
    page.goto(f"{live_server.url}/manage/templates_admin/prompttemplate/")
    page.check(f"input[name=_selected_action][value='{builtin.pk}']")
    page.select_option("select[name=action]", "customise")
    page.click("button[name=index]")
    page.wait_for_selector(".messagelist")
    own = PromptTemplate.objects.get(tenant=tenant, template_id="legal_analysis_balanced")

    page.goto(f"{live_server.url}/manage/templates_admin/prompttemplate/{own.pk}/change/")
    system = page.locator("#id_system_prompt")
    system.fill(system.input_value() + "\nHOUSE RULE: cite the clause number first.")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    screenshot("console-templates")
    own.refresh_from_db()
    builtin.refresh_from_db()
    assert "HOUSE RULE" in own.system_prompt and builtin.system_prompt == builtin_prompt

    _log_in(page, live_server.url, globex_owner)
    other_firms_view = page.goto(f"{live_server.url}/manage/templates_admin/prompttemplate/{own.pk}/change/")
    assert other_firms_view.status == 404


def _watch_csp(page) -> list[str]:
    """Every CSP violation the page reports, from the console and from the DOM event."""
    violations: list[str] = []
    page.on("console", lambda m: "Content Security Policy" in m.text and violations.append(m.text))
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation',"
        " e => console.error('Content Security Policy violation: ' + e.violatedDirective))"
    )
    return violations


def test_the_template_diff_is_readable_under_the_sites_csp(laptop, live_server, tenant, firm_admins):
    """Added and removed lines, each on its own line in its own colour, with no CSP violation: the
    diff's inline styles were blocked (#36, item 9)."""
    page, (acme_owner, _) = laptop, firm_admins
    template = template_create(
        tenant=tenant,
        data={
            "template_id": "house_style",
            "name": "House style",
            "system_prompt": "You are a careful legal assistant.",
            "user_prompt": "{context}\n\nQuestion: {question}",
        },
    )
    # Saved the way a browser posts a textarea (\r\n), the system prompt edited, the user prompt not.
    template = template_update(
        tenant=tenant,
        template_id=template.template_id,
        data={
            "system_prompt": "You are a careful legal assistant.\r\nCite the clause number first.",
            "user_prompt": "{context}\r\n\r\nQuestion: {question}",
        },
    )
    violations = _watch_csp(page)
    _log_in(page, live_server.url, acme_owner)
    diff = f"{live_server.url}/manage/templates_admin/prompttemplate/{template.pk}/diff/?version=2"
    page.goto(diff)
    assert [h.strip() for h in page.locator("h3.diff-field").all_inner_texts()] == ["System prompt"]
    added, context = page.locator(".diff-line.added"), page.locator(".diff-line.context")
    assert added.all_inner_texts() == ["+Cite the clause number first."]
    assert context.first.bounding_box()["y"] < added.first.bounding_box()["y"]  # one line each

    def background(locator) -> str:
        return locator.evaluate("e => getComputedStyle(e).backgroundColor")

    # A replacement: removed lines and the added one, each its own line and colour.
    template_update(tenant=tenant, template_id="house_style", data={"system_prompt": "Be brief."})
    page.goto(f"{live_server.url}/manage/templates_admin/prompttemplate/{template.pk}/diff/?version=3")
    removed, added = page.locator(".diff-line.removed"), page.locator(".diff-line.added")
    assert removed.count() == 2 and added.all_inner_texts() == ["+Be brief."]
    boxes = [line.bounding_box()["y"] for line in page.locator("pre.diff .diff-line").all()]
    assert boxes == sorted(boxes) and len(set(boxes)) == len(boxes)
    assert background(removed.first) != background(added.first)

    page.goto(
        f"{live_server.url}/manage/templates_admin/prompttemplate/{template.pk}/diff/?version=3&layout=side_by_side"
    )
    changed = page.locator("table.diff tr.changed")
    old, new = changed.locator("td.old-text").first, changed.locator("td.new-text").first
    assert "rgba(0, 0, 0, 0)" not in (background(old), background(new))
    assert background(old) != background(new)  # the old text and the new in their own colours
    assert violations == []


def test_a_member_opening_the_console_gets_one_clear_message(laptop, live_server, tenant):
    page = laptop
    member = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    violations = _watch_csp(page)
    page.goto(f"{live_server.url}/cases/")
    page.fill("#id_username", member.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/cases/")

    page.goto(f"{live_server.url}/manage/")
    messages = page.locator(".errornote")
    assert messages.count() == 1
    text = messages.inner_text()
    assert "admins and owners" in text and f"Your role in {tenant.name} is member" in text
    assert "platform operator" not in page.content() and "not authorized" not in page.content()
    assert violations == []
    messages.get_by_role("link", name="Back to Lexrag").click()
    page.wait_for_url(f"{live_server.url}/cases/")


OLD = "Indemnity clause. The Supplier shall indemnify the Buyer against all third-party claims."
NEW = "Inspection. The Buyer inspects the goods within ten days; indemnity applies to misuse only."


@pytest.fixture
def indemnity_corpus(tenant, settings, tmp_path):
    """Two indemnity clauses of the first firm: one old, one recent, so recency can reorder them."""
    settings.MEDIA_ROOT = tmp_path / "media"
    case = rag_services.case_create(tenant=tenant, name="Supply dispute")
    recent = datetime.date.today() - datetime.timedelta(days=10)
    for name, text, date in [("old.txt", OLD, datetime.date(2001, 1, 1)), ("new.txt", NEW, recent)]:
        ingest.document_upload(
            tenant=tenant,
            case=case,
            filename=name,
            content=text.encode(),
            fields=ingest.DocumentFields(title=f"Clause {name[:-4]}", document_date=date),
        )
    return case


def test_a_firm_admin_runs_the_firm_and_the_other_firm_sees_none(
    laptop, live_server, tenant, firm_admins, indemnity_corpus, screenshot
):
    page, (acme_owner, globex_owner) = laptop, firm_admins
    base = f"{live_server.url}/manage"
    _log_in(page, live_server.url, acme_owner)
    screenshot("console-index")

    # Customise a built-in template, then see the firm's version in a simulation (from the menu).
    builtin = PromptTemplate.objects.get(tenant__isnull=True, template_id="legal_analysis_balanced")
    page.goto(f"{base}/templates_admin/prompttemplate/")
    page.check(f"input[name=_selected_action][value='{builtin.pk}']")
    page.select_option("select[name=action]", "customise")
    page.click("button[name=index]")
    own = PromptTemplate.objects.get(tenant=tenant, template_id="legal_analysis_balanced")
    page.goto(f"{base}/templates_admin/prompttemplate/{own.pk}/change/")
    system = page.locator("#id_system_prompt")
    system.fill(system.input_value() + "\nHOUSE RULE: cite the clause number first.")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")

    page.goto(f"{base}/")
    page.click("text=Simulate a query (dry run)")
    page.fill("#id_question", "Who must indemnify whom?")
    page.select_option("#id_template_id", "legal_analysis_balanced")
    page.fill("#id_top_k", "2")
    page.click("input[value=Simulate]")
    page.wait_for_selector("#simulation-system")
    assert "HOUSE RULE: cite the clause number first." in page.locator("#simulation-system").inner_text()
    assert "indemnify" in page.locator("#simulation-user").inner_text()
    screenshot("console-simulation")

    # Tune the ranking weights: the preview shows the order change; saving stores them.
    page.goto(f"{base}/rag/rankingweights/tune/")

    def preview(similarity: str, recency: str) -> list[str]:
        page.fill("#id_similarity_weight", similarity)
        page.fill("#id_recency_weight", recency)
        page.fill("#id_trust_weight", "0")
        page.fill("#id_question", "Who shall indemnify the Buyer against third-party claims?")
        page.click("input[name=_preview]")
        page.wait_for_selector("#ranking-preview .ranking-row")
        return page.locator("#ranking-preview .after-title").all_inner_texts()

    assert preview("1", "0")[0] == "Clause old"
    assert preview("0", "1")[0] == "Clause new"
    screenshot("console-weights")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    saved = RankingWeights.objects.get(tenant=tenant)
    assert saved.recency_weight > saved.similarity_weight

    # Invite a new member by e-mail: a pending invitation (no account, no membership yet) and a
    # mailed link; the list shows only the address typed.
    page.goto(f"{base}/tenants/invitation/add/")
    page.fill("#id_identifier", "new.associate@acme.test")
    page.select_option("#id_role", "member")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .info, .messagelist .success")
    invited = Invitation.objects.get(tenant=tenant, identifier="new.associate@acme.test")
    assert invited.role == Role.MEMBER and invited.status == "pending"
    assert not Membership.objects.filter(tenant=tenant, user__email="new.associate@acme.test").exists()
    assert any("new.associate@acme.test" in message.to for message in mail.outbox)
    assert "new.associate@acme.test" in page.locator("#result_list").inner_text()
    assert page.evaluate("(r => r.scrollWidth <= r.clientWidth)(document.querySelector('.results'))")
    screenshot("console-members")

    # The other firm's admin: none of it.
    _log_in(page, live_server.url, globex_owner)
    page.goto(f"{base}/tenants/invitation/")
    assert "new.associate@acme.test" not in page.content()
    page.goto(f"{base}/templates_admin/prompttemplate/")
    assert "your firm" not in page.locator("#result_list").inner_text()
    assert page.goto(f"{base}/templates_admin/prompttemplate/{own.pk}/change/").status == 404
    page.goto(f"{base}/rag/rankingweights/")
    assert acme_owner.username not in page.content()
    page.goto(f"{base}/simulate/")
    page.fill("#id_question", "Who must indemnify whom?")
    page.fill("#id_top_k", "2")
    page.click("input[value=Simulate]")
    page.wait_for_load_state()
    assert "Supplier shall indemnify" not in page.content() and "HOUSE RULE" not in page.content()
    assert not RankingWeights.objects.exclude(tenant=tenant).exists()
