from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("conversion", "0002_conversionjob_kind_conversionjob_result_and_more"),
    ]

    operations = [
        migrations.RenameField(model_name="conversionjob", old_name="source_path", new_name="source_key"),
        migrations.AddField(
            model_name="conversionjob",
            name="source_store",
            field=models.CharField(default="jobs", max_length=10),
        ),
    ]
