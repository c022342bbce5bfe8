from django.contrib.auth import views as auth_views
from django.urls import path

from console import views

app_name = "console"

urlpatterns = [
    path("", views.home, name="home"),
    path("sign-in/", views.sign_in, name="sign-in"),
    path("sign-out/", views.sign_out, name="sign-out"),
    path("sign-out-everywhere/", views.sign_out_everywhere, name="sign-out-everywhere"),
    path(
        "password-reset/",
        views.password_reset,
        name="password-reset",
    ),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(template_name="console/password_reset_sent.html"),
        name="password-reset-sent",
    ),
    path(
        "password-reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password-reset-confirm",
    ),
    path(
        "password-reset/complete/",
        auth_views.PasswordResetCompleteView.as_view(template_name="console/password_reset_complete.html"),
        name="password-reset-complete",
    ),
    path("invitations/<str:token>", views.invitation, name="invitation"),
    path("<str:org_id>/", views.spending, name="spending"),
    path("<str:org_id>/statement/", views.statement, name="statement"),
    path("<str:org_id>/statement.csv", views.statement_csv, name="statement-csv"),
    path("<str:org_id>/usage/", views.usage_records, name="usage-records"),
    path("<str:org_id>/requests/<str:request_id>/", views.request_detail, name="request"),
    path("<str:org_id>/jobs/", views.job_list, name="jobs"),
    path("<str:org_id>/jobs/<str:job_id>/", views.job_detail, name="job"),
    path("<str:org_id>/jobs/<str:job_id>/cancel/", views.job_cancel, name="job-cancel"),
    path("<str:org_id>/jobs/<str:job_id>/result.md", views.job_result, {"fmt": "md"}, name="job-result-md"),
    path("<str:org_id>/jobs/<str:job_id>/result.json", views.job_result, {"fmt": "json"}, name="job-result-json"),
    path("<str:org_id>/keys/", views.key_list, name="keys"),
    path("<str:org_id>/keys/new/", views.key_create, name="key-create"),
    path("<str:org_id>/keys/<str:key_id>/", views.key_detail, name="key"),
    path("<str:org_id>/keys/<str:key_id>/edit/", views.key_update, name="key-update"),
    path("<str:org_id>/keys/<str:key_id>/rotate/", views.key_rotate, name="key-rotate"),
    path("<str:org_id>/keys/<str:key_id>/revoke/", views.key_revoke, name="key-revoke"),
    path("<str:org_id>/keys/<str:key_id>/leak/", views.key_confirm_leak, name="key-leak"),
    path("<str:org_id>/keys/<str:key_id>/activity.csv", views.key_activity_report, name="key-activity"),
    path("<str:org_id>/members/", views.member_list, name="members"),
    path("<str:org_id>/members/invite/", views.member_invite, name="member-invite"),
    path("<str:org_id>/members/<int:member_id>/role/", views.member_set_role, name="member-role"),
    path("<str:org_id>/members/<int:member_id>/remove/", views.member_remove, name="member-remove"),
    path("<str:org_id>/invitations/<int:invitation_id>/revoke/", views.invitation_revoke, name="invitation-revoke"),
    path("<str:org_id>/files/", views.file_list, name="files"),
    path("<str:org_id>/files/<str:file_id>/delete/", views.file_remove, name="file-delete"),
    path("<str:org_id>/webhooks/", views.webhook_list, name="webhooks"),
    path("<str:org_id>/webhooks/new/", views.webhook_create, name="webhook-create"),
    path("<str:org_id>/webhooks/<str:endpoint_id>/", views.webhook_detail, name="webhook"),
    path("<str:org_id>/webhooks/<str:endpoint_id>/disable/", views.webhook_disable, name="webhook-disable"),
    path("<str:org_id>/webhooks/<str:endpoint_id>/enable/", views.webhook_enable, name="webhook-enable"),
    path("<str:org_id>/webhooks/<str:endpoint_id>/rotate/", views.webhook_rotate, name="webhook-rotate"),
    path("<str:org_id>/webhooks/<str:endpoint_id>/delete/", views.webhook_delete, name="webhook-delete"),
    path(
        "<str:org_id>/webhooks/<str:endpoint_id>/deliveries/<int:delivery_id>/",
        views.webhook_delivery,
        name="webhook-delivery",
    ),
    path(
        "<str:org_id>/webhooks/<str:endpoint_id>/deliveries/<int:delivery_id>/resend/",
        views.webhook_resend,
        name="webhook-resend",
    ),
    path("<str:org_id>/audit/", views.audit_log, name="audit"),
    path("<str:org_id>/password/", views.password_change, name="password-change"),
]
