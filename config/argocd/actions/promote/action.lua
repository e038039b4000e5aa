-- Lets every pod move to the update revision: the partition is 0 (a CloneSet's spec.updateStrategy.partition, an
-- InPlaceStatefulSet's rollingUpdate.partition), as after a canary that went well.
-- parent[key] as an object, made one when it is missing or not an object.
local function object(parent, key)
  if type(parent[key]) ~= "table" or #parent[key] > 0 then parent[key] = {} end
  return parent[key]
end
local strategy = object(object(obj, "spec"), "updateStrategy")
if obj.kind == "InPlaceStatefulSet" then strategy = object(strategy, "rollingUpdate") end
strategy.partition = 0
return obj
