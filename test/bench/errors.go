package main

import apierrors "k8s.io/apimachinery/pkg/api/errors"

func isExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// joinErr adds err to a run's error text.
func joinErr(text string, err error) string {
	if text == "" {
		return err.Error()
	}
	return text + "; " + err.Error()
}
