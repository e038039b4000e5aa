import yaml, copy
d=yaml.safe_load(open('crds/apps.tailor.dev_clonesets.yaml'))
v=d['spec']['versions'][0]
s=v['schema']['openAPIV3Schema']
cs=s['properties']['spec']['properties']
us=cs['updateStrategy']['properties']
def intstr(name, desc, default=None, minimum=0):
    node={'x-kubernetes-int-or-string': True, 'anyOf':[{'type':'integer'},{'type':'string'}], 'maxLength':64, 'description':desc,
      'x-kubernetes-validations':[
        {'rule': f"type(self) == int ? self >= {minimum} : self.matches('^(100|[1-9]?[0-9])%$')" if minimum==0 else f"type(self) == int ? self >= {minimum} : self.matches('^(100|[1-9][0-9]?)%$')",
         'message': f'{name} must be an integer >= {minimum} or a percentage from "{minimum}%" to "100%"'},
        {'rule':'type(self) != int || self <= 2147483647','message':f'{name} must not exceed 2147483647 (an int32); write a percentage such as "100%" instead'}]}
    if default is not None: node['default']=default
    return node
rolling={'type':'object','description':"Advanced StatefulSet's rolling update: how many pods move at once, which stay, and how.",
 'properties':{
  'partition':{'type':'integer','format':'int32','minimum':0,'maximum':2147483647,'default':0,
     'description':'The number of pods kept at the current revision; with the default order (highest ordinal first) the pods with the lowest ordinals. Defaults to 0.'},
  'maxUnavailable': intstr('rollingUpdate.maxUnavailable','The most pods out of service at once during an update: an integer >= 1 or a percentage of replicas (rounded down, at least 1). Defaults to 1.', 1, 1),
  'podUpdatePolicy':{'type':'string','enum':['ReCreate','InPlaceIfPossible','InPlaceOnly'],'default':'InPlaceIfPossible',
     'description':'InPlaceIfPossible (the default) updates images and cpu/memory in place and recreates for anything else; InPlaceOnly never recreates; ReCreate deletes and recreates each pod under its name and claims.'},
  'paused':{'type':'boolean','description':'Stops updating pods while true. Scaling goes on.'},
  'unorderedUpdate':{'type':'object','description':'Update pods in a priority order instead of highest ordinal first.',
     'properties':{'priorityStrategy': copy.deepcopy(us['priorityStrategy'])}},
  'inPlaceUpdateStrategy': copy.deepcopy(us['inPlaceUpdateStrategy']),
  'minReadySeconds':{'type':'integer','format':'int32','minimum':0,'maximum':300,'description':'Seconds a pod must be ready to count as available, 0 to 300 (Advanced StatefulSet); overrides spec.minReadySeconds.'},
 }}
updateStrategy={'type':'object','default':{},'description':'How pods move to a new template.',
 'properties':{
  'type':{'type':'string','enum':['RollingUpdate','OnDelete'],'default':'RollingUpdate','description':'RollingUpdate (the default) updates pods as rollingUpdate says; OnDelete never touches a running pod (one you delete comes back at the new revision).'},
  'rollingUpdate':rolling,
  'resizeStrategy':copy.deepcopy(us['resizeStrategy']),
 },
 'x-kubernetes-validations':[
  {'rule':"!has(self.rollingUpdate) || !has(self.type) || self.type == 'RollingUpdate'",'fieldPath':'.rollingUpdate','reason':'FieldValueForbidden',
   'message':'rollingUpdate applies only when updateStrategy.type is RollingUpdate: remove rollingUpdate or set type to RollingUpdate'},
  {'rule':"!has(self.rollingUpdate) || !has(self.rollingUpdate.podUpdatePolicy) || self.rollingUpdate.podUpdatePolicy != 'InPlaceOnly' || !has(self.resizeStrategy) || ((!has(self.resizeStrategy.onTimeout) || self.resizeStrategy.onTimeout == 'Wait') &&\n (!has(self.resizeStrategy.onInfeasible) || self.resizeStrategy.onInfeasible == 'Wait'))",
   'fieldPath':'.resizeStrategy','reason':'FieldValueForbidden',
   'message':'InPlaceOnly never recreates pods: set resizeStrategy.onTimeout and onInfeasible to Wait (or omit them), or use InPlaceIfPossible'},
 ]}
retention={'type':'string','enum':['Retain','Delete'],'default':'Retain'}
spec_props={
 'replicas':copy.deepcopy(cs['replicas']),
 'selector':copy.deepcopy(cs['selector']),
 'template':copy.deepcopy(cs['template']),
 'serviceName':{'type':'string','maxLength':63,'description':'The headless Service that gives each pod its DNS name: <pod>.<serviceName>.<namespace>.svc (the pod subdomain).'},
 'podManagementPolicy':{'type':'string','enum':['OrderedReady','Parallel'],'default':'OrderedReady','description':'OrderedReady (the default) creates pods in ordinal order, each once the previous is Ready, and removes them in reverse one at a time; Parallel does not wait. Fixed once the set exists, as for a StatefulSet.',
   'x-kubernetes-validations':[{'rule':'self == oldSelf','message':'podManagementPolicy cannot change once the set exists (as for a StatefulSet): delete the set with --cascade=orphan and create it again'}]},
 'updateStrategy':updateStrategy,
 'volumeClaimTemplates':copy.deepcopy(cs['volumeClaimTemplates']),
 'persistentVolumeClaimRetentionPolicy':{'type':'object','default':{},'description':'What happens to the claims of volumeClaimTemplates when the set is deleted or scaled down.',
   'properties':{'whenDeleted':dict(retention,description='Retain (the default) keeps the claims when the set is deleted; Delete has them deleted with the set (they are owned by it).'),
                 'whenScaled':dict(retention,description='Retain (the default) keeps the claims of pods removed by a scale-down; Delete deletes them once those pods are gone.')}},
 'ordinals':{'type':'object','description':'Where pod ordinals start.','properties':{'start':{'type':'integer','format':'int32','minimum':0,'default':0,'description':'The first ordinal: pods are <name>-<start>, <name>-<start+1>, ... Defaults to 0.'}}},
 'minReadySeconds':copy.deepcopy(cs['minReadySeconds']),
 'revisionHistoryLimit':copy.deepcopy(cs['revisionHistoryLimit']),
 'reserveOrdinals':{'type':'array','maxItems':1000,'description':'Ordinals no pod takes (Advanced StatefulSet): integers or ranges "a-b"; the set keeps replicas pods by going around them.',
   'items':{'x-kubernetes-int-or-string':True,'anyOf':[{'type':'integer'},{'type':'string'}],'maxLength':32,
     'x-kubernetes-validations':[{'rule':"type(self) == int ? self >= 0 : (self.matches('^[0-9]{1,9}-[0-9]{1,9}$') && int(self.split('-')[0]) <= int(self.split('-')[1]))",
        'message':'each reserveOrdinals entry must be an integer >= 0 or a range "a-b" with a <= b, such as "3-5"'}]}},
 'scaleStrategy':{'type':'object','description':'How pods are created when scaling.','properties':{'maxUnavailable':copy.deepcopy(cs['scaleStrategy']['properties']['maxUnavailable'])}},
 'lifecycle':copy.deepcopy(cs['lifecycle']),
 'volumeClaimUpdateStrategy':{'type':'object','description':'What a change of volumeClaimTemplates does to existing claims (KEP-4650 names).',
   'properties':{'type':{'type':'string','enum':['OnClaimDelete','InPlace'],'default':'OnClaimDelete','description':'OnClaimDelete (the default) leaves existing claims as they are; a claim deleted is made again from the new template. InPlace raises a claim\'s storage request to its template\'s once its pod is on the update revision (so a partition holds it too), without recreating the pod; claims are never lowered, and the claim\'s StorageClass must allow volume expansion (the API server refuses the resize otherwise, and the set reports it as FailedUpdate and Stalled). status.volumeClaims counts the claims that follow.'}}},
 'progressDeadlineSeconds':copy.deepcopy(cs['progressDeadlineSeconds']),
}
# replicas default 1 in both
serviceNameFixed={'rule':"(has(self.serviceName) ? self.serviceName : '') == (has(oldSelf.serviceName) ? oldSelf.serviceName : '')",
  'fieldPath':'.serviceName','reason':'FieldValueForbidden',
  'message':'serviceName cannot change once the set exists (the pods\' DNS names hang on it, as for a StatefulSet): delete the set with --cascade=orphan and create it again'}
spec_node={'type':'object','required':['selector','template'],'properties':spec_props,
  'x-kubernetes-validations':[r for r in s['properties']['spec']['x-kubernetes-validations'] if 'selector' in r['rule'] or 'progressDeadlineSeconds' in r['rule']]+[serviceNameFixed]}
new=copy.deepcopy(d)
new['metadata']['name']='inplacestatefulsets.apps.tailor.dev'
new['spec']['names']={'kind':'InPlaceStatefulSet','listKind':'InPlaceStatefulSetList','plural':'inplacestatefulsets','singular':'inplacestatefulset','shortNames':['ipsts'],'categories':['all']}
nv=new['spec']['versions'][0]
ns=nv['schema']['openAPIV3Schema']
ns['description']='An InPlaceStatefulSet: a StatefulSet whose pods keep their names, claims and warm state through image updates and cpu/memory resizes, updated in place by Tailor.'
ns['x-kubernetes-validations']=[{'rule':'!has(self.metadata.name) || size(self.metadata.name) <= 52','reason':'FieldValueInvalid',
  'message':'metadata.name must be at most 52 characters: the controller-revision-hash label on every pod is the name plus an 11-character suffix, and label values are limited to 63 characters'}]
ns['properties']['spec']=spec_node
# apps/v1's currentReplicas, beside the CloneSet's status (written by src/inplacestatefulset/pure/status.ts).
status_props=ns['properties']['status']['properties']
current_replicas={'type':'integer','format':'int32','description':'The number of pods at currentRevision.'}
volume_claims={'type':'array','maxItems':8,'description':'Per claim template that requests storage, how many pods have a claim that follows it (Advanced StatefulSet\'s names).',
  'items':{'type':'object','required':['volumeClaimName','compatibleReplicas','compatibleReadyReplicas'],'properties':{
    'volumeClaimName':{'type':'string','maxLength':253,'description':'The claim template\'s name.'},
    'compatibleReplicas':{'type':'integer','format':'int32','description':'Pods whose claim of this template requests at least the template\'s storage.'},
    'compatibleReadyReplicas':{'type':'integer','format':'int32','description':'Of those, the pods whose claim has that capacity: its resize finished.'}}}}
status_props['volumeClaims']=volume_claims
ns['properties']['status']['properties']=dict(
  kv for k,v in status_props.items() for kv in ([('currentReplicas',current_replicas)] if k=='currentRevision' else [])+[(k,v)])
# Advanced StatefulSet's columns: DESIRED, CURRENT (the pods created), UPDATED, READY, AGE.
cols=[]
for c in nv['additionalPrinterColumns']:
    cols.append(c)
    if c['name']=='DESIRED':
        cols.append({'name':'CURRENT','type':'integer','jsonPath':'.status.replicas','description':'The number of pods created.'})
nv['additionalPrinterColumns']=cols
# What the CloneSet's schema says of a CloneSet, said of this kind.
def rename(node):
    if isinstance(node, dict):
        for k,v in node.items():
            if k in ('message','messageExpression','description') and isinstance(v,str):
                node[k]=v.replace('CloneSets','InPlaceStatefulSets').replace('CloneSet','InPlaceStatefulSet')
            else:
                rename(v)
    elif isinstance(node, list):
        for v in node: rename(v)
rename(ns['properties'])
spec_props['volumeClaimTemplates']['description']=('PersistentVolumeClaims every pod gets (at most 8): the claim of a template is named '
  '<template>-<name>-<ordinal>, created before its pod, used by that ordinal only and mounted as the pod volume named after the '
  'template. Claims outlive their pod; whether they outlive a scale-down and the set is persistentVolumeClaimRetentionPolicy (Retain by default).')
header='''# InPlaceStatefulSet CRD (apps.tailor.dev/v1alpha1): a superset of apps/v1 StatefulSet, so a
# StatefulSet manifest ports by changing apiVersion and kind, with OpenKruise Advanced
# StatefulSet's names where it extends the native one (updateStrategy.rollingUpdate.{partition,
# maxUnavailable, podUpdatePolicy, paused, unorderedUpdate, inPlaceUpdateStrategy, minReadySeconds},
# reserveOrdinals, scaleStrategy.maxUnavailable, lifecycle) and KEP-4650's volumeClaimUpdateStrategy
# (docs/decisions/0087 and 0088). Owns the API shape and every check the API server makes on the
# kind (OpenAPI schema + CEL rules); there is no admission webhook. The template, selector, claim
# templates, lifecycle, resizeStrategy and status are the CloneSet's (crds/apps.tailor.dev_clonesets.yaml),
# generated from it by hack/gen-stateful-crd.py so the two never drift; defaults stay in step with
# src/api/stateful-types.ts (withStatefulDefaults). Same CEL cost rules as the CloneSet's.
'''
class D(yaml.SafeDumper): pass
def str_repr(dumper, data):
    if '\n' in data: return dumper.represent_scalar('tag:yaml.org,2002:str', data, style='|')
    return dumper.represent_scalar('tag:yaml.org,2002:str', data)
D.add_representer(str, str_repr)
open('crds/apps.tailor.dev_inplacestatefulsets.yaml','w').write(header+yaml.dump(new, Dumper=D, sort_keys=False, width=120))
