from django.contrib import admin

from tournaments.models import WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["hostname", "last_seen", "beats"]
    readonly_fields = ["hostname", "last_seen", "beats"]
    ordering = ["hostname"]
