package e2e_test

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

var metav1GetOptions = metav1.GetOptions{}
