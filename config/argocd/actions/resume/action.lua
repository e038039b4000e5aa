-- Resumes the rollout: spec.updateStrategy.paused = false.
-- parent[key] as an object, made one when it is missing or not an object.
local function object(parent, key)
  if type(parent[key]) ~= "table" or #parent[key] > 0 then parent[key] = {} end
  return parent[key]
end
object(object(obj, "spec"), "updateStrategy").paused = false
return obj
