-- Argo CD action discovery for Tailor's CloneSet and InPlaceStatefulSet: restart, pause and resume, as Argo CD offers for
-- a Deployment. pause is disabled while spec.updateStrategy.paused is true, resume while it is not.
local actions = {}
actions["restart"] = { ["iconClass"] = "fa fa-fw fa-redo" }
local paused = false
if type(obj) == "table" and type(obj.spec) == "table" and type(obj.spec.updateStrategy) == "table" then
  local strategy = obj.spec.updateStrategy
  paused = strategy.paused == true or (type(strategy.rollingUpdate) == "table" and strategy.rollingUpdate.paused == true)
end
actions["pause"] = { ["disabled"] = paused, ["iconClass"] = "fa fa-fw fa-pause-circle" }
actions["resume"] = { ["disabled"] = not paused, ["iconClass"] = "fa fa-fw fa-play-circle" }
return actions
