"""How moments are written where Django writes them itself (the admin's lists and forms): as
the pages do (``|timestamp``), the day first and the zone said (``2026-11-24 09:27:09 UTC``;
``T`` is the zone of the moment shown, the site's ``TIME_ZONE``), to the second for the
operators (a worker's last heartbeat, a table's lease)."""

DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = DATE_FORMAT
