-- Argo CD action discovery for Tailor's CloneSet and InPlaceStatefulSet: restart, pause and resume, as Argo CD offers for
-- a Deployment, and canary and promote for a release by partition. pause is disabled while the rollout is paused, resume
-- while it is not; canary while a partition already holds pods back, promote while none does. While OpenKruise Rollout
-- drives the workload (its annotation rollouts.kruise.io/in-progressing), it owns the partition and the pause: all four
-- are disabled, and the user pauses or approves on its Rollout.
local actions = {}
actions["restart"] = { ["iconClass"] = "fa fa-fw fa-redo" }
local spec = type(obj) == "table" and type(obj.spec) == "table" and obj.spec or {}
local strategy = type(spec.updateStrategy) == "table" and spec.updateStrategy or {}
local rolling = type(strategy.rollingUpdate) == "table" and strategy.rollingUpdate or {}
local paused = strategy.paused == true or rolling.paused == true
-- The partition that applies to the kind: the InPlaceStatefulSet keeps it in rollingUpdate.
local partition = strategy.partition
if type(obj) == "table" and obj.kind == "InPlaceStatefulSet" then partition = rolling.partition end
local holding = (type(partition) == "number" and partition > 0)
  or (type(partition) == "string" and partition ~= "" and partition ~= "0" and partition ~= "0%")
local metadata = type(obj) == "table" and type(obj.metadata) == "table" and obj.metadata or {}
local annotations = type(metadata.annotations) == "table" and metadata.annotations or {}
local driven = annotations["rollouts.kruise.io/in-progressing"] ~= nil
actions["pause"] = { ["disabled"] = driven or paused, ["iconClass"] = "fa fa-fw fa-pause-circle" }
actions["resume"] = { ["disabled"] = driven or not paused, ["iconClass"] = "fa fa-fw fa-play-circle" }
actions["canary"] = { ["disabled"] = driven or holding, ["iconClass"] = "fa fa-fw fa-dove" }
actions["promote"] = { ["disabled"] = driven or not holding, ["iconClass"] = "fa fa-fw fa-forward" }
return actions
