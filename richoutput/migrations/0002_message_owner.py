# Stored messages get an owner (who stored them). Rows stored before keep NULL: staff-only.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('richoutput', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='assistantmessage',
            name='owner',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='assistant_messages', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddIndex(
            model_name='assistantmessage',
            index=models.Index(fields=['owner', '-created_at', '-id'], name='assistantmsg_owner_newest'),
        ),
    ]
