"""Prompt template administration (orchestration spec, "Admin Controls / Template CRUD"), admin role.

A tenant sees its own templates and the built-ins; "editing" a built-in gives the tenant its own
copy under the same id (templates_admin.services), and deleting that copy brings the built-in back.
Every write is a new version; the history can be listed and an earlier version restored.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.response import Response

from rag.api.common import AdminApiView, acting_user, error_response, page_serializer, paginated
from ragsite.schema import request_schema
from templates_admin import selectors, services
from templates_admin.rendering import (
    ALLOWED_PLACEHOLDERS,
    CITATION_STYLES,
    MAX_FOLLOW_UPS,
    RESPONSE_STYLES,
    STRICTNESS_LEVELS,
)

_PLACEHOLDERS = ", ".join("{" + name + "}" for name in ALLOWED_PLACEHOLDERS)
_PROMPT_HELP = f"A format string with the placeholders {_PLACEHOLDERS}; literal braces are {{{{ and }}}}."
_TEMPLATE_ID = OpenApiParameter(
    "template_id",
    str,
    OpenApiParameter.PATH,
    pattern=r"^[-a-zA-Z0-9_]+$",
    description='A slug, e.g. "legal_analysis_balanced".',
)
_NOT_FOUND = error_response("No such template for this tenant (another tenant's is unknown too).")
_CHANGE_REFUSED = error_response(
    "A field is not valid, no field to change was given (`{}`, or only template_id), or template_id is "
    "not the URL's (a template's id cannot be changed: create a new template)."
)


class PromptTemplateOutputSerializer(serializers.Serializer):
    template_id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    response_style = serializers.ChoiceField(choices=RESPONSE_STYLES)
    citation_style = serializers.ChoiceField(choices=CITATION_STYLES)
    strictness = serializers.ChoiceField(choices=STRICTNESS_LEVELS)
    follow_up_count = serializers.IntegerField()
    system_prompt = serializers.CharField()
    user_prompt = serializers.CharField()
    instructions_block = serializers.CharField()
    placeholders = serializers.ListField(
        child=serializers.CharField(), help_text="The placeholders the two prompts use."
    )
    is_builtin = serializers.BooleanField(help_text="Shared by every tenant; edits create your own copy.")
    version = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class TemplateFieldsInputSerializer(serializers.Serializer):
    """The editable fields, all optional (POST and PATCH); the model's full_clean stays the authority."""

    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    response_style = serializers.ChoiceField(choices=RESPONSE_STYLES, required=False)
    system_prompt = serializers.CharField(required=False, trim_whitespace=False, help_text=_PROMPT_HELP)
    user_prompt = serializers.CharField(
        required=False,
        trim_whitespace=False,
        help_text=_PROMPT_HELP + " Must contain {context} and {question}.",
    )
    instructions_block = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, help_text="Plain text, no placeholders."
    )
    citation_style = serializers.ChoiceField(choices=CITATION_STYLES, required=False)
    strictness = serializers.ChoiceField(choices=STRICTNESS_LEVELS, required=False)
    follow_up_count = serializers.IntegerField(min_value=0, max_value=MAX_FOLLOW_UPS, required=False)


@extend_schema_field({"type": "string", "readOnly": True})
class _UrlTemplateId(serializers.SlugField):
    """Read-only in OpenAPI, so left out of the request schema: a template's id never changes. The
    URL's own id is still accepted, as a client sends back the template it read."""


class _ChangesInputSerializer(TemplateFieldsInputSerializer):
    """PUT and PATCH: `template_id` may be repeated but never changed; something must change."""

    template_id = _UrlTemplateId(max_length=100, required=False)

    def validate(self, attrs):
        if not set(attrs) - {"template_id"}:
            raise serializers.ValidationError("Give at least one field to change.")
        return attrs


_CREATE_EXAMPLE = OpenApiExample(
    "Create",
    value={
        "template_id": "custom_terse",
        "name": "Custom Terse",
        "system_prompt": "You are a careful legal research assistant.",
        "user_prompt": "Context: {context}\n\nQuestion: {question}\n\n{instructions}",
        "citation_style": "inline_numbers",
    },
    request_only=True,
)


class TemplateListCreateApi(AdminApiView):
    """GET: the tenant's templates and the built-ins it has not overridden.
    POST: create or update by `template_id` (spec: "Create or update prompt template")."""

    class InputSerializer(TemplateFieldsInputSerializer):
        template_id = serializers.SlugField(
            max_length=100, help_text="A new id creates; one you have is updated; a built-in's is overridden."
        )

    @extend_schema(responses=PromptTemplateOutputSerializer(many=True))
    def get(self, request):
        templates = selectors.template_list(tenant=self.tenant)
        return Response(PromptTemplateOutputSerializer(templates, many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={
            201: OpenApiResponse(
                PromptTemplateOutputSerializer,
                description="Created: a new id, or your own copy of the built-in with this id.",
            ),
            200: OpenApiResponse(PromptTemplateOutputSerializer, description="Your template's new version."),
            409: error_response("A template with this id was created meanwhile."),
        },
        examples=[_CREATE_EXAMPLE],
    )
    def post(self, request):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        template, created = services.template_create_or_update(
            tenant=self.tenant, data=payload.validated_data, user=acting_user(request)
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(PromptTemplateOutputSerializer(template).data, status=code)


class TemplateDetailApi(AdminApiView):
    """GET one template; PUT and PATCH change the fields given and keep the others (the
    orchestration spec's PUT example sends only `system_prompt`), each a new version (for a
    built-in, your own copy); DELETE removes your own template. `template_id` is read-only: a body
    may repeat the URL's id, another is a 400."""

    @request_schema(minProperties=1)
    class ChangeInputSerializer(_ChangesInputSerializer):
        """Only the fields given change."""

    @extend_schema(
        parameters=[_TEMPLATE_ID], responses={200: PromptTemplateOutputSerializer, 404: _NOT_FOUND}
    )
    def get(self, request, template_id: str):
        template = selectors.template_get(tenant=self.tenant, template_id=template_id)
        return Response(PromptTemplateOutputSerializer(template).data)

    @extend_schema(
        parameters=[_TEMPLATE_ID],
        request=ChangeInputSerializer,
        responses={200: PromptTemplateOutputSerializer, 400: _CHANGE_REFUSED, 404: _NOT_FOUND},
        examples=[
            OpenApiExample("Update", value={"system_prompt": "Updated prompt..."}, request_only=True),
        ],
    )
    def put(self, request, template_id: str):
        return self._update(request, template_id, self.ChangeInputSerializer)

    @extend_schema(
        parameters=[_TEMPLATE_ID],
        request=ChangeInputSerializer,
        responses={200: PromptTemplateOutputSerializer, 400: _CHANGE_REFUSED, 404: _NOT_FOUND},
        examples=[
            OpenApiExample("Update", value={"system_prompt": "Updated prompt..."}, request_only=True),
        ],
    )
    def patch(self, request, template_id: str):
        return self._update(request, template_id, self.ChangeInputSerializer)

    @extend_schema(
        parameters=[_TEMPLATE_ID],
        responses={
            204: OpenApiResponse(description="Deleted; a built-in with this id is visible again."),
            403: error_response("A built-in template cannot be deleted (or the role is too low)."),
            404: _NOT_FOUND,
        },
    )
    def delete(self, request, template_id: str):
        services.template_delete(tenant=self.tenant, template_id=template_id)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _update(self, request, template_id: str, serializer_class):
        payload = serializer_class(data=request.data)
        payload.is_valid(raise_exception=True)
        template = services.template_update(
            tenant=self.tenant,
            template_id=template_id,
            data=payload.validated_data,
            user=acting_user(request),
        )
        return Response(PromptTemplateOutputSerializer(template).data)


class TemplateVersionListApi(AdminApiView):
    """GET: the template's history, newest first (each write is one version; 1 = as created)."""

    class OutputSerializer(serializers.Serializer):
        version = serializers.IntegerField()
        snapshot = serializers.DictField(help_text="template_id and the editable fields as of this version.")
        created_at = serializers.DateTimeField()
        created_by = serializers.CharField(
            source="created_by.username", allow_null=True, help_text="null for an API key or the system."
        )

    PageSerializer = page_serializer(OutputSerializer)

    @extend_schema(
        parameters=[
            _TEMPLATE_ID,
            OpenApiParameter("page", int, description="1-based page number."),
            OpenApiParameter("page_size", int, description="Rows per page (default 50, at most 200)."),
        ],
        responses={200: PageSerializer, 404: error_response("No such template, or no such page.")},
        operation_id="v1_rag_admin_templates_versions_list",
    )
    def get(self, request, template_id: str):
        versions = selectors.template_version_list(tenant=self.tenant, template_id=template_id)
        return paginated(self, versions.select_related("created_by"), self.OutputSerializer)


class TemplateRevertApi(AdminApiView):
    """POST {"version": n}: restore that version's fields as a new version (the history is kept)."""

    class InputSerializer(serializers.Serializer):
        version = serializers.IntegerField(min_value=1)

    @extend_schema(
        parameters=[_TEMPLATE_ID],
        request=InputSerializer,
        responses={200: PromptTemplateOutputSerializer, 404: error_response("No such template or version.")},
        examples=[OpenApiExample("Revert", value={"version": 2}, request_only=True)],
    )
    def post(self, request, template_id: str):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        template = services.template_revert(
            tenant=self.tenant,
            template_id=template_id,
            version=payload.validated_data["version"],
            user=acting_user(request),
        )
        return Response(PromptTemplateOutputSerializer(template).data)


urlpatterns = [
    path("admin/templates", TemplateListCreateApi.as_view(), name="admin-template-list"),
    path("admin/templates/<slug:template_id>", TemplateDetailApi.as_view(), name="admin-template-detail"),
    path(
        "admin/templates/<slug:template_id>/versions",
        TemplateVersionListApi.as_view(),
        name="admin-template-versions",
    ),
    path(
        "admin/templates/<slug:template_id>/revert", TemplateRevertApi.as_view(), name="admin-template-revert"
    ),
]
