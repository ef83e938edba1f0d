from django.urls import path

from chat import views

urlpatterns = [
    path("", views.chat, name="chat"),
    path("<int:conversation_id>/", views.chat, name="conversation"),
    path("<int:conversation_id>/delete/", views.conversation_delete, name="conversation_delete"),
    path("messages/<int:message_id>/remember/", views.message_remember, name="message_remember"),
]
