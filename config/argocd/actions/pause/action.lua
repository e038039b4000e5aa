-- Pauses the rollout: spec.updateStrategy.paused = true, an InPlaceStatefulSet's rollingUpdate.paused (no pod is updated until resumed).
-- parent[key] as an object, made one when it is missing or not an object.
local function object(parent, key)
  if type(parent[key]) ~= "table" or #parent[key] > 0 then parent[key] = {} end
  return parent[key]
end
local strategy = object(object(obj, "spec"), "updateStrategy")
-- An InPlaceStatefulSet keeps paused where Advanced StatefulSet does: updateStrategy.rollingUpdate.
if obj.kind == "InPlaceStatefulSet" then strategy = object(strategy, "rollingUpdate") end
strategy.paused = true
return obj
