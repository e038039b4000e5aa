-- Argo CD health check for Tailor's workloads (apps.tailor.dev/CloneSet and InPlaceStatefulSet, whose
-- status is the CloneSet's; its partition and pause live under updateStrategy.rollingUpdate).
-- Installed through argocd-cm (resource.customizations.health.apps.tailor.dev_<Kind>), where
-- Argo CD runs it without Lua's string and math libraries, so it uses neither. Every field is
-- type-checked before use: an object with fields missing or of an odd type gets a verdict, never
-- a Lua error. Reads what Kruise's CloneSet status says (Tailor writes the same) and, when
-- present, the kstatus conditions Reconciling and Stalled; controllers that do not write those
-- get the same verdicts from the counters and Kruise's Progressing condition.
local function tbl(v)
  if type(v) == "table" then return v end
  return nil
end

local function num(v)
  if type(v) == "number" then return v end
  return nil
end

local function str(v)
  if type(v) == "string" then return v end
  return nil
end

local function first(...)
  for i = 1, select("#", ...) do
    local v = num((select(i, ...)))
    if v ~= nil then return v end
  end
  return 0
end

-- A condition of the given type, or nil.
local function condition(status, kind)
  local conditions = tbl(status.conditions)
  if conditions == nil then return nil end
  for _, c in ipairs(conditions) do
    if tbl(c) ~= nil and c.type == kind then return c end
  end
  return nil
end

local function says(c, fallback)
  local message = str(c.message)
  if message ~= nil and message ~= "" then return message end
  local reason = str(c.reason)
  if reason ~= nil and reason ~= "" then return reason end
  return fallback
end

-- partition as a number of pods: an int, a percent string ("50%", rounded up as Kruise does), or
-- absent (0, the CRD's default). Parsed without the string library: "N%" for N in 0..100. Only
-- read when the status has no expectedUpdatedReplicas (controllers that do not write it).
local function partitionOf(partition, replicas)
  if partition == nil then return 0 end
  if type(partition) == "number" then return partition end
  if type(partition) == "string" then
    local n = tonumber(partition)
    if n ~= nil then return n end
    for p = 0, 100 do
      if partition == tostring(p) .. "%" then
        local scaled = replicas * p
        local pods = (scaled - scaled % 100) / 100
        if scaled % 100 > 0 then pods = pods + 1 end
        -- As Kruise: a percent below 100% that rounds up to every replica leaves one to update.
        if replicas > 1 and pods >= replicas and p < 100 then pods = replicas - 1 end
        return pods
      end
    end
  end
  return 0
end

local hs = { status = "Progressing", message = "Waiting for the controller to report status" }
local o = tbl(obj) or {}
local metadata = tbl(o.metadata) or {}
local spec = tbl(o.spec) or {}
local strategy = tbl(spec.updateStrategy) or {}
local rolling = tbl(strategy.rollingUpdate) or {}
local kind = str(o.kind) or "CloneSet"
local status = tbl(o.status)
if status == nil then return hs end

local generation = num(metadata.generation)
local observed = num(status.observedGeneration)
if generation ~= nil and (observed == nil or observed < generation) then
  hs.message = "Waiting for the controller to observe generation " .. generation
  return hs
end

local stalled = condition(status, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = says(stalled, kind .. " is stalled")
  return hs
end
local progressing = condition(status, "Progressing")
if progressing ~= nil and progressing.reason == "ProgressDeadlineExceeded" then
  hs.status = "Degraded"
  hs.message = says(progressing, kind .. " exceeded its progress deadline")
  return hs
end

if strategy.paused == true or rolling.paused == true then
  hs.status = "Suspended"
  hs.message = kind .. " is paused"
  return hs
end

local desired = num(spec.replicas) or 1
local replicas = first(status.replicas)
local updated = first(status.updatedReplicas)
local updatedAvailable = first(status.updatedAvailableReplicas, status.updatedReadyReplicas)
local available = first(status.availableReplicas, status.readyReplicas)
local expected = num(status.expectedUpdatedReplicas)
if expected == nil then
  local partition = strategy.partition
  if partition == nil then partition = rolling.partition end
  expected = desired - partitionOf(partition, desired)
end
if expected > desired then expected = desired end
if expected < 0 then expected = 0 end

if updated < expected then
  hs.message = "Waiting for rollout to finish: " .. updated .. " of " .. expected .. " replicas updated"
  return hs
end
if updatedAvailable < expected then
  hs.message = "Waiting for rollout to finish: " .. updatedAvailable .. " of " .. expected .. " updated replicas available"
  return hs
end
if available < desired then
  hs.message = "Waiting for rollout to finish: " .. available .. " of " .. desired .. " replicas available"
  return hs
end
if replicas > desired then
  hs.message = "Waiting for rollout to finish: " .. (replicas - desired) .. " extra replicas pending termination"
  return hs
end

local reconciling = condition(status, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.message = says(reconciling, kind .. " is reconciling")
  return hs
end

if updated < desired then
  hs.status = "Suspended"
  hs.message = "Partition holds " .. (desired - updated) .. " of " .. desired .. " replicas at the old revision"
  return hs
end

hs.status = "Healthy"
hs.message = "All " .. desired .. " replicas are updated and available"
return hs
