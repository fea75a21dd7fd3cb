"""The staff UI's pages (see rag.web.views)."""

from django.urls import path

from . import answers, exports, review, views

app_name = "web"

urlpatterns = [
    path("", views.home, name="home"),
    path("cases/", views.cases, name="cases"),
    path("cases/<int:case_id>/", views.case, name="case"),
    path("cases/<int:case_id>/review/", review.review, name="review"),
    path("review/<int:table_id>/", review.review_table, name="review-table"),
    path("documents/<int:document_id>/", views.document, name="document"),
    path("ask/", views.ask, name="ask"),
    path("history/", views.history, name="history"),
    path("ask/<str:request_id>/", answers.answer, name="answer"),
    path("ask/<str:request_id>/memo.docx", exports.answer_docx, name="answer-docx"),
    path("ask/<str:request_id>/citations.txt", exports.answer_text, name="answer-text"),
    path(
        "conversations/<str:conversation_id>/memo.docx", exports.conversation_docx, name="conversation-docx"
    ),
    path("settings/", views.settings_page, name="settings"),
    path("tenant/switch", views.switch_tenant, name="switch-tenant"),
]
