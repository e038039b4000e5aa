-- Restarts every pod's containers: the template annotation kubectl.kubernetes.io/restartedAt, as
-- `kubectl rollout restart` and Argo CD's Deployment restart set it. Tailor restarts the
-- containers in place, pod by pod, within updateStrategy's budget (decision 15).
local os = require("os")
-- parent[key] as an object, made one when it is missing or not an object.
local function object(parent, key)
  if type(parent[key]) ~= "table" or #parent[key] > 0 then parent[key] = {} end
  return parent[key]
end
local annotations = object(object(object(obj, "spec"), "template"), "metadata")
annotations = object(annotations, "annotations")
annotations["kubectl.kubernetes.io/restartedAt"] = os.date("!%Y-%m-%dT%XZ")
return obj
