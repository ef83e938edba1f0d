"""The app's settings as the test suite runs them: the same, but for how passwords are hashed.

Django's default hasher (PBKDF2, a million rounds) spends ~0.6 s of a core on every password set or
checked — on purpose, against someone who steals the table. The suite sets and checks a password for
nearly every test (hundreds of people signed up, logged in, given tokens), so there it was the largest
single cost of a run. The fast hasher only ever meets the suite's own throwaway passwords. Every
process a test starts (the web server, Celery workers) inherits DJANGO_SETTINGS_MODULE from pytest,
so a password set here is checked there with the same hasher.
"""

from secondbrain.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
