-- Resumes the rollout: spec.updateStrategy.paused = false (an InPlaceStatefulSet's rollingUpdate.paused).
-- parent[key] as an object, made one when it is missing or not an object.
local function object(parent, key)
  if type(parent[key]) ~= "table" or #parent[key] > 0 then parent[key] = {} end
  return parent[key]
end
local strategy = object(object(obj, "spec"), "updateStrategy")
-- An InPlaceStatefulSet keeps paused where Advanced StatefulSet does: updateStrategy.rollingUpdate.
if obj.kind == "InPlaceStatefulSet" then strategy = object(strategy, "rollingUpdate") end
strategy.paused = false
return obj
