package cli

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

type kubeClient = kubernetes.Interface

var getOptions = metav1.GetOptions{}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
