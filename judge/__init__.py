"""The judge: runs sandboxed bots through the games engine. Never imports Django."""
