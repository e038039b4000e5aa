# The one place the test bed's pinned versions live. Sourced by hack/*.sh and read by the Makefile.
KUBE_VERSION=1.34.4
# kwok (simulated nodes for the scale benchmark), built from its Go module by hack/build-kwok.sh.
KWOK_VERSION=0.8.0
# OpenKruise's kruise-manager (the peer in the scale bench), built from its Go module by
# hack/build-kruise.sh. v1.8.2 is the newest release the module proxy serves here.
KRUISE_VERSION=1.8.2
