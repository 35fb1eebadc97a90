"""`python -m rlvr_gym.scale --nodes 2`: a loopback Ray cluster for trying the backend (see docs/scale.md)."""

from .cluster import main

raise SystemExit(main())
