// kserve-tm — the peer of bench/convergence: KServe's own TrainedModel reconciler
// (github.com/kserve/kserve/pkg/controller/v1alpha1/trainedmodel, at the version pinned in
// go.mod) under a controller-runtime manager, set up the way KServe's cmd/manager sets it up
// (one worker, controller-runtime's client defaults, a live clientset for the ConfigMap GET,
// the same event recorder), with nothing else of KServe's manager: no InferenceService
// controller, no webhooks, no leader election.
//
// Metrics and health listen on loopback, on ports the kernel picks. The kubeconfig comes from
// controller-runtime's own --kubeconfig flag.
//
// Usage: kserve-tm --kubeconfig FILE [--zap-log-level info]
package main

import (
	"flag"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kserve/kserve/pkg/apis/serving/v1alpha1"
	"github.com/kserve/kserve/pkg/apis/serving/v1beta1"
	trainedmodel "github.com/kserve/kserve/pkg/controller/v1alpha1/trainedmodel"
	"github.com/kserve/kserve/pkg/controller/v1alpha1/trainedmodel/reconcilers/modelconfig"
)

func main() {
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("kserve-tm")

	cfg, err := config.GetConfig()
	if err != nil {
		log.Error(err, "kubeconfig")
		os.Exit(1)
	}
	log.Info("client config", "qps", cfg.QPS, "burst", cfg.Burst)
	clientSet, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Error(err, "clientset")
		os.Exit(1)
	}
	mgr, err := manager.New(cfg, manager.Options{
		Metrics:                metricsserver.Options{BindAddress: "127.0.0.1:0"},
		HealthProbeBindAddress: "127.0.0.1:0",
	})
	if err != nil {
		log.Error(err, "manager")
		os.Exit(1)
	}
	// The two API groups the TrainedModel reconciler reads (KServe's scheme.AddKServeAPIs
	// registers these among others; the manager's scheme already holds client-go's types).
	if err := v1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
		log.Error(err, "scheme")
		os.Exit(1)
	}
	if err := v1beta1.AddToScheme(mgr.GetScheme()); err != nil {
		log.Error(err, "scheme")
		os.Exit(1)
	}
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: clientSet.CoreV1().Events("")})
	if err := (&trainedmodel.TrainedModelReconciler{
		Client:                mgr.GetClient(),
		Log:                   ctrl.Log.WithName("v1beta1Controllers").WithName("TrainedModel"),
		Scheme:                mgr.GetScheme(),
		Recorder:              broadcaster.NewRecorder(mgr.GetScheme(), corev1.EventSource{Component: "v1beta1Controllers"}),
		ModelConfigReconciler: modelconfig.NewModelConfigReconciler(mgr.GetClient(), clientSet, mgr.GetScheme()),
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "TrainedModel controller")
		os.Exit(1)
	}
	log.Info("starting")
	if err := mgr.Start(signals.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
