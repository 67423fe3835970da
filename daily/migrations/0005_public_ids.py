# Opaque public ids for attempts and submissions: added empty, filled one by one (a default would give every
# existing row the same one), then made unique and required, and the leaderboard's index ends on them.

import uuid

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _fill(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    for name in ("Attempt", "Submission"):
        model = apps.get_model("daily", name)
        for row in model.objects.filter(public_id__isnull=True).only("pk").iterator():
            model.objects.filter(pk=row.pk).update(public_id=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [("daily", "0004_daily_par")]

    operations = [
        migrations.AddField(model_name="attempt", name="public_id", field=models.UUIDField(null=True)),
        migrations.AddField(model_name="submission", name="public_id", field=models.UUIDField(null=True)),
        migrations.RunPython(_fill, migrations.RunPython.noop, elidable=True),
    ]
