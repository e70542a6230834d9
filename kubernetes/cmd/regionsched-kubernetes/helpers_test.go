package main

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

var (
	getOptions    = metav1.GetOptions{}
	updateOptions = metav1.UpdateOptions{}
)
