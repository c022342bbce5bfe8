from django.urls import path

from conversion import api, documents_api, jobs_api

urlpatterns = [
    path("v1/convert", api.ConvertApi.as_view(), name="convert"),
    path("v1/convert/raw", api.ConvertRawApi.as_view(), name="convert-raw"),
    path("v1/engines", api.EnginesApi.as_view(), name="engines"),
    path("v1/engines/<str:engine_id>", api.EngineDetailApi.as_view(), name="engine"),
    path("v1/files", documents_api.FileCreateApi.as_view(), name="files"),
    path("v1/files/raw", documents_api.FileCreateRawApi.as_view(), name="files-raw"),
    path("v1/files/<str:file_id>", documents_api.FileDetailApi.as_view(), name="file"),
    path("v1/files/<str:file_id>/content", documents_api.FileContentApi.as_view(), name="file-content"),
    path("v1/inspect", documents_api.InspectApi.as_view(), name="inspect"),
    path("v1/inspect/raw", documents_api.InspectRawApi.as_view(), name="inspect-raw"),
    path("v1/toc", documents_api.TocApi.as_view(), name="toc"),
    path("v1/toc/raw", documents_api.TocRawApi.as_view(), name="toc-raw"),
    path("v2/inspect", jobs_api.JobInspectApi.as_view(), name="job-inspect"),
    path("v2/inspect/raw", jobs_api.JobInspectRawApi.as_view(), name="job-inspect-raw"),
    path("v2/jobs", jobs_api.JobsApi.as_view(), name="jobs"),
    path("v2/jobs/raw", jobs_api.JobsRawApi.as_view(), name="jobs-raw"),
    path("v2/jobs/<str:job_id>", jobs_api.JobDetailApi.as_view(), name="job"),
    path("v2/jobs/<str:job_id>/result", jobs_api.JobResultApi.as_view(), name="job-result"),
    path("v2/jobs/<str:job_id>/cancel", jobs_api.JobCancelApi.as_view(), name="job-cancel"),
]
