"""Pure rich-output core: no Django, Channels, asgiref or ninja imports."""
