from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from console.urls import site as console_site
from ragsite.apis import HealthApi, platform_metrics
from ragsite.exception_handlers import json_404
from tenants import views as tenant_views
from tenants.login_throttle import ThrottledAdminAuthenticationForm, ThrottledAuthenticationForm

handler404 = "ragsite.exception_handlers.json_404"
# Every login form is throttled (tenants.login_throttle); the firm console's form is too.
admin.site.login_form = ThrottledAdminAuthenticationForm
handler500 = "ragsite.exception_handlers.json_500"

api_v1 = [
    path("health", HealthApi.as_view(), name="health"),
    path("tenants/", include("tenants.urls")),
    path("rag/", include("rag.urls")),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("manage/", console_site.urls),
    path("metrics", platform_metrics, name="platform-metrics"),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Split: its start-up script is a file of its own, so the CSP needs no inline scripts.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    # Unknown /api/ URLs answer with the JSON error body, even with DEBUG on.
    re_path(r"^api/", json_404),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            redirect_authenticated_user=True, authentication_form=ThrottledAuthenticationForm
        ),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/firms/", tenant_views.firms, name="firms"),
    path("accounts/firms/<slug:slug>/leave", tenant_views.firm_leave, name="firm-leave"),
    path(
        "accounts/invitations/<int:invitation_id>/<str:answer>",
        tenant_views.invitation_answer,
        name="invitation-answer",
    ),
    path("accounts/invitations/<str:token>/", tenant_views.invitation_open, name="invitation-open"),
    # Links mailed before invitations needed consent (their membership exists): set a password.
    path(
        "accounts/invitation/<uidb64>/<token>/",
        tenant_views.InvitationAcceptView.as_view(),
        name="invitation-accept",
    ),
    path("", include("rag.web.urls")),
]
