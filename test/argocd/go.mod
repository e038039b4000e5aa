// The Argo CD test harness for config/argocd (run by test/argocd/run.sh, the `argocd` step of
// hack/test.sh). gopher-lua and gopher-json are pinned to the versions Argo CD v3.5.1's go.mod
// requires; a test fails if its go.mod ever says otherwise.
module tailor.local/argocdtest

go 1.26

require (
	github.com/yuin/gopher-lua v1.1.2
	layeh.com/gopher-json v0.0.0-20190114024228-97fed8db8427
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
