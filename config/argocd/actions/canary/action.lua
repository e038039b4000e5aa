-- Holds every pod but one at the current revision, so the next template change reaches one pod first: the partition is
-- replicas - 1 (a CloneSet's spec.updateStrategy.partition counts the pods kept back; an InPlaceStatefulSet's
-- rollingUpdate.partition is the lowest ordinal updated, so the highest ordinal goes first). promote lets the rest go.
-- parent[key] as an object, made one when it is missing or not an object.
local function object(parent, key)
  if type(parent[key]) ~= "table" or #parent[key] > 0 then parent[key] = {} end
  return parent[key]
end
local spec = object(obj, "spec")
local replicas = 1
if type(spec.replicas) == "number" then replicas = spec.replicas end
local held = replicas - 1
if held < 0 then held = 0 end
local strategy = object(spec, "updateStrategy")
if obj.kind == "InPlaceStatefulSet" then strategy = object(strategy, "rollingUpdate") end
strategy.partition = held
return obj
