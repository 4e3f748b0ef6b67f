"""The one vocabulary of labels and annotations by which pods, workloads and gangs are tied to their DGD,
component, group and rank: the Dynamo operator's, Grove's, LWS's, Volcano's and KAI's, as they set them."""

from kubectl_dynamo.operator.api import LABEL_COMPONENT as COMPONENT_LABEL
from kubectl_dynamo.operator.api import LABEL_DGD as DGD_LABEL

__all__ = ["COMPONENT_LABEL", "DGD_LABEL"]  # the operator's own, defined with its other API names

# Grove (grove.io labels on PodCliques and their pods, ai-dynamo/grove operator/api common labels)
GROVE_CLIQUE = "grove.io/podclique"
GROVE_GROUP = "grove.io/podcliquescalinggroup-replica-index"
GROVE_POD_INDEX = "grove.io/podclique-pod-index"
LWS_GROUP = "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"  # on LWS pods and the StatefulSets LWS creates (lws@v0.9.0)
# The pod's gang: LWS's volcano provider annotates every pod of a group with its Volcano PodGroup
# (lws@v0.9.0 pkg/schedulerprovider/volcano_provider.go, annotation of k8s.io/api scheduling/v1alpha1
# "scheduling.k8s.io/group-name"); KAI's podgrouper annotates pods with theirs (KAI-Scheduler@v0.17.0
# pkg/common/constants "pod-group-name").
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
KAI_GROUP_ANNOTATION = "pod-group-name"
DEFAULT_SCHEDULER = "default-scheduler"
GROVE_PODGANG = "grove.io/podgang"
GROVE_PCSG = "grove.io/podcliquescalinggroup"
PART_OF = "app.kubernetes.io/part-of"
# Helm marks every object of a release (helm@v3.18.6 pkg/action/validate.go setMetadataVisitor): the label
# app.kubernetes.io/managed-by=Helm and these two annotations; hooks do not get them, but charts label their
# objects with the release as app.kubernetes.io/instance (helm create's _helpers.tpl convention).
HELM_RELEASE_NAME = "meta.helm.sh/release-name"
HELM_RELEASE_NAMESPACE = "meta.helm.sh/release-namespace"
INSTANCE_LABEL = "app.kubernetes.io/instance"
