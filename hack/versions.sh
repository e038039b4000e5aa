# The one place the test bed's pinned versions live. Sourced by hack/*.sh and read by the Makefile.
KUBE_VERSION=1.34.4
