"""The bot SDK: ``tapis_bot.py``, one standard-library file that bots import (``/sdk``)."""
